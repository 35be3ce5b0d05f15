"""Lab: a real server. Load the lab's own HTTP server (or a vLLM / SGLang one) and watch its gauges."""
import streamlit as st

from lessons import page_slugs as slugs
from ui.instructor import access, moments, passcode
from ui.labs import server_panels
from ui.labs import models

PAGE = slugs.REAL_SERVER
ss = st.session_state

pending, _, _ = moments.page_header(PAGE, "rs", {"workload": "chat-and-reports", "prompts": 16, "rate": 4.0,
                                              "inprocess": True})
if pending and pending.workload:
    ss[f"{PAGE}.workload"] = pending.workload
# in a class (a passcode is set) the server is the instructor's: students watch, and load nothing
control = passcode.configured() is None or access.unlocked()
info = server_panels.server_panel(PAGE, control)
run, sweep = server_panels.load_panel(PAGE, control)
if pending and not control:  # a student's page does not start the class's server
    moments.started(PAGE)
    pending = None
if pending and info is None:  # a lecture moment brings its own server, then runs (it stays queued till then)
    server_panels.start_lab_server(models.chosen())
    ss.pop(f"{PAGE}.url")
    st.rerun()
if (run or pending) and info:
    moments.started(PAGE)  # before the load, which is long: a failed load is not tried again on every rerun
    server_panels.run_live(PAGE, ss[f"{PAGE}.url"].strip())
if sweep and info:
    server_panels.run_sweep(PAGE, ss[f"{PAGE}.url"].strip())
server_panels.show_result(PAGE)
server_panels.show_sweep(PAGE)
