"""How a recorded run plays. `player` draws the controls and decides, per page run, whether the server draws a
still frame or the browser animates every frame from one clock (`client_player` + `client_player.js` for HTML
views, `live_chart` + `live_chart.html` for charts). A run's frames are gzipped once into files every browser
fetches (`frame_files`); runs a lecture moment asks for are computed once per process in the background and
shared (`run_cache`); what views derive from a run is kept beside it (`derived`)."""
