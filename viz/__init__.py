"""Plotly figure builders: pure functions from engine snapshots (and labels) to figures."""
