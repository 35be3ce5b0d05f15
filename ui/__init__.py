"""Serving Lab's Streamlit glue, one folder per capability (pages/ holds one thin file per page and calls these):

- shell/      the frame every page runs in: navigation, sidebar, style, URL state, i18n and strings, `make run`
- playback/   how a recorded run plays: player controls, in-browser playback (+ JS), live charts, frame files,
              the shared run cache and what views derive from a run
- views/      the drawn views of a run (slot timeline, KV memory, results) and the lesson renderer
- progress/   a student's saved progress (?s= link, the classroom store) and the Home panel
- instructor/ lecture moments, the class view, live polls, the passcode and who may do what
- labs/       the labs' own glue: experiments, engine knobs, workload editor, model cache, downloads, real server
- practice/   the quiz and the worksheets: widgets, answers kept, what the engine measured beside them
"""
