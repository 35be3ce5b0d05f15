"""The frame every page runs in: the page registry and navigation (nav), the shared sidebar, the page style and
instructor mode's type scale (style), language and mode kept in the URL (url_state), strings in zh/en (i18n +
strings.yaml), and `python -m ui.serve`, which `make run` and `make class` start."""
