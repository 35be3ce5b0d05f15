"""Streamlit glue shared by the pages: language, model cache, player, common views and controls."""
