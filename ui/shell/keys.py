"""Session keys shared across the UI; the URL carries the first three (ui/shell/url_state.py)."""
LANG = "lang"  # "zh" or "en"
INSTRUCTOR = "instructor"  # instructor mode: bigger type, lecture moments in the sidebar
REDUCE_MOTION = "reduce_motion"  # ?motion=reduce: the player never animates (ui/playback/player.py), no transitions
STUDENT_TOKEN = "progress.token"  # ?s=: the student whose progress is saved (ui/progress/saved.py)
NAV_PAGES = "nav.pages"  # url path -> this run's st.Page, for nav.go
SCROLL_TOP = "nav.scroll_top"  # set by nav.go: the next page starts at its top
ANIMATING = "player.animating"  # the page being drawn is playing (ui/playback/player.py): charts skip hover layers
