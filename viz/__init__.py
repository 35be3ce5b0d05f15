"""Plotly figure builders: pure functions from engine snapshots (and labels) to figures.

Figures carry no template: plotly.py deep-copies and validates a template into every figure it
builds, which at 10 frames/s costs more than drawing them; plotly.js's own defaults look plain and
clean. (Streamlit draws them with theme=None for the same reason.)
"""
import plotly.io as pio

pio.templates.default = None
