// Serving Lab's in-browser player (ui/client_player.py): while a recorded run plays, every animated
// HTML view holds all its frames and this one loop swaps each view's innerHTML when the clock says the
// frame changed. The live charts (ui/live_chart.html, iframes of the same origin) read the same clock
// anchor from window.__labAnim, so every view shows the same frame without messaging.
(function () {
  if (window.__labAnim) return;
  const A = window.__labAnim = { tracks: {}, anchors: {}, running: 0, drawn: 0, shown: {} };
  // The clock: frame = start + floor(elapsed * speed). The server says how long ago playback started
  // (not when: a student's laptop clock may be off), so each clock is anchored once, on first sight.
  A.anchor = function (clock) {
    if (!(clock.id in A.anchors)) A.anchors[clock.id] = Date.now() - clock.elapsed_ms;
    return A.anchors[clock.id];
  };
  A.frameAt = function (clock) {
    const elapsed = Date.now() - A.anchor(clock);
    return Math.min(clock.last, clock.start + Math.floor(elapsed * clock.speed / 1000));
  };
  // frames: per frame a list of indices into pieces (a view's HTML cut before each tag, de-duplicated)
  A.decode = function (data, frame) {
    const idx = data.frames[Math.min(frame, data.frames.length - 1)];
    let html = "";
    for (const k of idx) html += data.pieces[k];
    return html;
  };
  A.track = function (key, clock, data) {
    A.anchor(clock);
    A.tracks[key] = { clock: clock, data: data, shown: null };
    if (!A.running) A.running = requestAnimationFrame(tick);
  };
  function tick() {
    let alive = false, drew = false;
    for (const key of Object.keys(A.tracks)) {
      const tr = A.tracks[key];
      const els = document.querySelectorAll('[data-anim="' + key + '"][data-clock="' + tr.clock.id + '"]');
      if (!els.length) { delete A.tracks[key]; continue; }  // the server has drawn a still frame there
      alive = true;
      const frame = A.frameAt(tr.clock);
      if (frame !== tr.shown) {
        const html = A.decode(tr.data, frame);
        els.forEach(function (el) { el.innerHTML = html; });
        tr.shown = A.shown[key] = frame;  // (A.shown: the last frame each view drew, for tests)
        drew = true;
      }
    }
    if (drew) A.drawn += 1;
    A.running = alive ? requestAnimationFrame(tick) : 0;
  }
})();
