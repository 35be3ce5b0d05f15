"""Lab: a real server. Load the lab's own HTTP server (or a vLLM / SGLang one) and watch its gauges."""
import streamlit as st

from ui.instructor import moments
from ui.labs import server_panels as real_server
from ui.labs import models

PAGE = "real-server"
ss = st.session_state

pending, _ = moments.page_header(PAGE, "rs", {"workload": "chat-and-reports", "prompts": 16, "rate": 4.0,
                                              "inprocess": True})
if pending and pending.workload:
    ss[f"{PAGE}.workload"] = pending.workload
info = real_server.server_panel(PAGE)
run, sweep = real_server.load_panel(PAGE)
if pending and info is None:  # a lecture moment brings its own server, then runs
    real_server.start_lab_server(models.chosen())
    ss.pop(f"{PAGE}.url")
    ss["pending_moment"] = pending.id
    st.rerun()
if (run or pending) and info:
    real_server.run_live(PAGE, ss[f"{PAGE}.url"].strip())
if sweep and info:
    real_server.run_sweep(PAGE, ss[f"{PAGE}.url"].strip())
real_server.show_result(PAGE)
real_server.show_sweep(PAGE)
