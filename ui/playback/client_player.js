// Serving Lab's in-browser player (ui/playback/client_player.py): while a recorded run plays, every animated
// HTML view fetches all its frames and this one loop swaps each view's innerHTML when the clock says the
// frame changed. The live charts (ui/playback/live_chart.html, iframes of the same origin) read the same clock
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
  // A view's frames come as a file (ui/playback/frame_files.py, gzipped JSON), fetched once per URL: views of the
  // same run and later page runs showing the same frames share one fetch.
  A.files = {};
  A.load = function (url) {
    if (!(url in A.files)) {
      A.files[url] = fetch(url).then(function (r) {
        if (!r.ok) throw new Error("frames " + url + ": HTTP " + r.status);
        return new Response(r.body.pipeThrough(new DecompressionStream("gzip"))).json();
      });
      A.files[url].catch(function () { delete A.files[url]; });  // the next page run tries again
    }
    return A.files[url];
  };
  // `el`: the clock the view's element was drawn with (an extended clock plays on in the same element)
  A.track = function (key, clock, url, el) {
    A.anchor(clock);
    const old = A.tracks[key];
    // the next chunk of a run still computed: until its frames are here, the old ones go on (to their end)
    const carried = old && old.data && clock.last > old.clock.last ? old.data : null;
    const tr = A.tracks[key] = { clock: clock, el: el || clock.id, data: carried, url: url, shown: null };
    A.load(url).then(function (data) {
      if (A.tracks[key] !== tr) return;
      tr.data = data;
      tr.shown = null;
      for (const u of Object.keys(A.files)) {  // what no view plays any more
        if (!Object.values(A.tracks).some(function (t) { return t.url === u; })) delete A.files[u];
      }
    }, function (e) { console.warn(e); });
    if (!A.running) A.running = requestAnimationFrame(tick);
  };
  // The next chunk of a run still computed, sent without drawing the page again (ui/playback/player.py): the views
  // playing the clock it extends (the same line) switch to it, and so do the charts, which look in A.next.
  A.next = {};
  A.extend = function (clock, urls) {
    if (clock.id in A.anchors) return;  // (the same message again)
    A.anchor(clock);
    for (const key of Object.keys(urls)) {
      A.next[key] = { clock: clock, url: urls[key] };
      const tr = A.tracks[key];
      if (tr && tr.clock.line === clock.line && clock.last > tr.clock.last) A.track(key, clock, urls[key], tr.el);
    }
  };
  function tick() {
    let alive = false, drew = false;
    for (const key of Object.keys(A.tracks)) {
      const tr = A.tracks[key];
      const els = document.querySelectorAll('[data-anim="' + key + '"][data-clock="' + tr.el + '"]');
      if (!els.length) { delete A.tracks[key]; continue; }  // the server has drawn a still frame there
      alive = true;
      if (!tr.data) continue;  // still fetching: the server's frame stays
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
