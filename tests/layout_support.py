"""What the layout tests measure in the page, in one JavaScript pass per look: every visible piece of text
(HTML text, widget labels, buttons, headings, and the SVG text of the charts inside their frames), whether
any two of them overlap, whether one is cut (an ellipsis, or a box that clips it), whether one spills
out of its button or its column, and whether one wraps inside a word (a Latin word anywhere; in a label, a
Chinese character left alone on its line).

A text box is the box of a run of rendered text (a DOM Range over a text node, one box per line), not of
the element around it: an element's box can be wider than its text (or narrower, when the text overflows
it), which is what the checks are about.

Below, what the layout tests share: the two window sizes, each lab page's lecture moment and the views of its
playing picture, and a look (settled, screenshot, text problems; the picture inside the window)."""
import re
import time

from browser_support import ARTIFACTS


TEXT_LAYOUT = r"""() => {
  const out = { overlaps: [], cut: [], spills: [], wraps: [], boxes: 0 };
  const short = s => s.replace(/\s+/g, ' ').trim().slice(0, 40);
  const boxes = [];  // {x0, y0, x1, y1, text, node}
  const shown = el => el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
  const ICON = /Material/i;
  const clips = v => v === 'hidden' || v === 'clip';
  // where a node's text breaks between two lines inside a word, or null: inside a Latin word ("utilis|ation")
  // anywhere; in a label (a button's, a widget's), between two Chinese characters where the break leaves one of
  // them alone on its line (「现|场」, 「给个提|示」): running text and a long label may break between characters,
  // but a line of one character is a word cut in two (a break at a space or after punctuation is fine)
  const LATIN = /[A-Za-z0-9]/, CJK = /[\u3400-\u9fff]/;
  function brokenWord(doc, node, label) {
    const text = node.nodeValue, range = doc.createRange(), chars = [], perLine = [];
    let top = null;
    for (let i = 0; i < text.length; i++) {
      if (/\s/.test(text[i])) continue;
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const r = range.getBoundingClientRect();
      if (r.width < 0.5) continue;
      const line = chars.length ? chars[chars.length - 1][1] + (r.top > top + r.height / 2 ? 1 : 0) : 0;
      top = r.top;
      chars.push([i, line]);
      perLine[line] = (perLine[line] || 0) + 1;
    }
    for (let k = 1; k < chars.length; k++) {
      const [i, line] = chars[k], [j, before] = chars[k - 1];
      if (line === before || j !== i - 1) continue;  // the same line, or a break at a space
      const a = text[j], b = text[i];
      if ((LATIN.test(a) && LATIN.test(b)) ||
          (label && CJK.test(a) && CJK.test(b) && (perLine[before] === 1 || perLine[line] === 1)))
        return text.slice(Math.max(0, j - 7), i) + '|' + text.slice(i, i + 8);
    }
    return null;
  }
  function where(el) {
    const page = el.ownerDocument.defaultView.frameElement ? 'chart' : (el.closest('[data-testid="stSidebar"]')
      ? 'sidebar' : 'main');
    const key = el.closest('[class*="st-key-"]');
    const name = key ? [...key.classList].find(c => c.startsWith('st-key-')).slice(7) : '';
    return name ? `${page}:${name}` : page;
  }
  function collect(doc, dx, dy, frame) {  // frame: the visible box of the frame this document is drawn in
    const walker = doc.createTreeWalker(doc.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.nodeValue.trim();
      const el = node.parentElement;
      if (!text || !el || el.closest('script, style, noscript, title, [aria-hidden="true"] .sr-only')) continue;
      if (!shown(el) || ICON.test(getComputedStyle(el).fontFamily)) continue;  // an icon's ligature, no label
      const range = doc.createRange();
      range.selectNodeContents(node);
      let rects = [...range.getClientRects()];
      if (!rects.length && el instanceof doc.defaultView.SVGElement) rects = [el.getBoundingClientRect()];
      if (rects.length > 1 && shown(el)) {
        const broken = brokenWord(doc, node, !!el.closest('button, label, [data-testid="stWidgetLabel"]'));
        if (broken) out.wraps.push(`${where(el)} "${short(text)}" wraps mid-word at "${broken}"`);
      }
      for (const r0 of rects) {
        if (r0.width < 1 || r0.height < 1) continue;
        const r = { x0: r0.left + dx, y0: r0.top + dy, x1: r0.right + dx, y1: r0.bottom + dy };
        // the glyphs: a line box is taller than its letters (a CJK font's much taller), so two lines of one
        // paragraph touch; the band of 0.7em around its middle is where letters are (across, for text
        // turned on its side: an axis title)
        const fs = parseFloat(getComputedStyle(el).fontSize) || 12;
        const turned = r.y1 - r.y0 > 2 * fs && r.y1 - r.y0 > r.x1 - r.x0;
        const mx = (r.x0 + r.x1) / 2, my = (r.y0 + r.y1) / 2, half = 0.35 * fs;
        const ink = turned ? { x0: mx - half, x1: mx + half, y0: r.y0, y1: r.y1 }
                           : { x0: r.x0, x1: r.x1, y0: my - half, y1: my + half };
        // a box that clips its content (overflow hidden): text wholly outside it is not shown, text partly
        // outside it is cut; the frame of a chart clips the same way
        let hidden = false, cut = null;
        const clippers = [];
        for (let a = el; a && a !== doc.body && a !== doc.documentElement; a = a.parentElement) {
          if (a instanceof doc.defaultView.SVGElement) continue;
          const cs = getComputedStyle(a);
          // past a box that scrolls, what is out of sight is reached by scrolling: neither cut nor in the way (a
          // wide block table scrolled within its column: its cells out to the right are not drawn there)
          if (/auto|scroll/.test(cs.overflowX + cs.overflowY)) {
            const b = a.getBoundingClientRect();
            const out = r.x1 <= b.left + dx + 1 || r.x0 >= b.right + dx - 1;
            if (/auto|scroll/.test(cs.overflowX) && out) hidden = true;
            if (/auto|scroll/.test(cs.overflowX)) {  // what shows of it is what lies inside the box
              ink.x0 = Math.max(ink.x0, b.left + dx);
              ink.x1 = Math.min(ink.x1, b.right + dx);
            }
            break;
          }
          const cx = clips(cs.overflowX), cy = clips(cs.overflowY);
          if (!cx && !cy) continue;
          const b = a.getBoundingClientRect();
          if (a.clientWidth <= 2 && a.clientHeight <= 2) { hidden = true; break; }  // a screen reader's text
          const box = { x0: b.left + a.clientLeft + dx, y0: b.top + a.clientTop + dy,
                        x1: b.left + a.clientLeft + a.clientWidth + dx, y1: b.top + a.clientTop + a.clientHeight + dy };
          clippers.push([box, cx, cy, a]);
        }
        if (frame) clippers.push([frame, true, true, null]);
        for (const [b, cx, cy, a] of clippers) {
          if ((cx && (r.x1 <= b.x0 + 1 || r.x0 >= b.x1 - 1)) || (cy && (r.y1 <= b.y0 + 1 || r.y0 >= b.y1 - 1))) {
            hidden = true;
            break;
          }
          const overX = cx ? Math.max(b.x0 - r.x0, r.x1 - b.x1) : 0;
          const overY = cy ? Math.max(b.y0 - r.y0, r.y1 - b.y1) : 0;
          // a line box is taller than its glyphs: a quarter of its height outside is a cut glyph
          if ((overX > 2 || overY > Math.max(2, 0.25 * (r.y1 - r.y0))) && !cut)
            cut = a ? (a.tagName.toLowerCase() + ' ' + (a.getAttribute('data-testid') || '')) : 'its chart frame';
        }
        if (hidden) continue;
        if (cut) out.cut.push(`${where(el)} "${short(text)}" clipped by ${cut.trim()}`);
        boxes.push(Object.assign(ink, { text: text, node: node, el: el }));
        // text outside its own button, or outside its column, has run into its neighbour's place
        const button = el.closest('button');
        if (button) {
          const b = button.getBoundingClientRect();
          if (r.x0 < b.left + dx - 1 || r.x1 > b.right + dx + 1 || r.y0 < b.top + dy - 1 || r.y1 > b.bottom + dy + 1)
            out.spills.push(`${where(el)} "${short(text)}" spills out of its button`);
        }
        const column = el.closest('[data-testid="stColumn"]');
        const scrolls = el.closest('.lab-scroll-x');
        if (column && !frame && !(scrolls && column.contains(scrolls))) {
          const c = column.getBoundingClientRect();
          if (r.x0 < c.left - 1 || r.x1 > c.right + 1)
            out.spills.push(`${where(el)} "${short(text)}" spills out of its column`);
        }
      }
    }
    // an ellipsis (or a clipped overflow) on an element whose own text is wider than the element
    for (const el of doc.body.querySelectorAll('*')) {
      if (!el.firstChild || ![...el.childNodes].some(n => n.nodeType === 3 && n.nodeValue.trim())) continue;
      const cs = getComputedStyle(el);
      const clipped = cs.textOverflow === 'ellipsis' || clips(cs.overflowX);
      if (clipped && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 2 && shown(el))
        out.cut.push(`${where(el)} "${short(el.textContent)}" cut (${el.clientWidth}px of ${el.scrollWidth}px)`);
      if (cs.webkitLineClamp && cs.webkitLineClamp !== 'none' && el.scrollHeight > el.clientHeight + 1 && shown(el))
        out.cut.push(`${where(el)} "${short(el.textContent)}" cut to ${cs.webkitLineClamp} lines`);
    }
  }
  collect(document, 0, 0, null);
  // a select box shows its value in an input (no text node above): wider than the input, it is cut
  for (const input of document.querySelectorAll('input[role="combobox"]')) {
    if (input.value && shown(input) && input.scrollWidth > input.clientWidth + 1)
      out.cut.push(`${where(input)} "${short(input.value)}" cut (${input.clientWidth}px of ${input.scrollWidth}px)`);
  }
  for (const iframe of document.querySelectorAll('iframe')) {
    let doc = null;
    try { doc = iframe.contentDocument; } catch (e) { continue; }
    if (!doc || !doc.body || !shown(iframe)) continue;
    const b = iframe.getBoundingClientRect();
    if (b.width < 2 || b.height < 2) continue;
    const dx = b.left + iframe.clientLeft, dy = b.top + iframe.clientTop;
    collect(doc, dx, dy, { x0: dx, y0: dy, x1: dx + iframe.clientWidth, y1: dy + iframe.clientHeight });
  }
  out.boxes = boxes.length;
  boxes.sort((a, b) => a.y0 - b.y0);
  for (let i = 0; i < boxes.length; i++) {
    const a = boxes[i];
    for (let j = i + 1; j < boxes.length && boxes[j].y0 < a.y1; j++) {
      const b = boxes[j];
      if (a.node === b.node) continue;
      const ix = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
      const iy = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
      if (ix > 1 && iy > 1)
        out.overlaps.push(`${where(a.el)} "${short(a.text)}" overlaps ${where(b.el)} "${short(b.text)}"`);
    }
  }
  for (const k of ['overlaps', 'cut', 'spills', 'wraps']) out[k] = [...new Set(out[k])];
  return out;
}"""

# Side-by-side columns that hold a run's views: none wider than its room, none over its neighbour.
OVERFLOWING_COLUMNS = r"""() => {
  const out = [];
  for (const row of document.querySelectorAll('[data-testid="stMain"] [data-testid="stHorizontalBlock"]')) {
    const cols = [...row.children].filter(c => c.matches('[data-testid="stColumn"]'));
    if (cols.length < 2 || !row.querySelector('iframe, [data-anim], .lab-run-heading')) continue;
    for (let i = 0; i < cols.length; i++) {
      const over = cols[i].scrollWidth - cols[i].clientWidth;
      if (over > 1) out.push(`column ${i} of a row of ${cols.length} overflows by ${over}px`);
      if (i > 0 && cols[i - 1].getBoundingClientRect().right > cols[i].getBoundingClientRect().left + 1)
        out.push(`columns ${i - 1} and ${i} of a row of ${cols.length} overlap`);
    }
  }
  return out;
}"""

# The box of each element a selector names, visible ones only, in the window's coordinates.
BOXES = r"""(selector) => [...document.querySelectorAll(selector)]
  .filter(el => el.checkVisibility({ visibilityProperty: true }))
  .map(el => { const r = el.getBoundingClientRect();
               return { x: r.left, y: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height }; })
  .filter(r => r.width > 0 && r.height > 0)"""


def text_layout(page) -> dict:
    return page.evaluate(TEXT_LAYOUT)


def problems(layout: dict) -> list[str]:
    return [readable(p) for p in layout["overlaps"] + layout["cut"] + layout["spills"] + layout["wraps"]]


def readable(text: str) -> str:
    """Text the page gave, with half an emoji (a JavaScript slice can cut a surrogate pair) as U+FFFD: pytest-xdist
    cannot send a report holding a lone surrogate, and its worker's crash would end the whole run."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


PROJECTOR, LAPTOP = (1280, 720), (1440, 900)

# each lab page's lecture moment, and the views of its playing picture in each run's column (selectors, by the
# keys the views are drawn with: ui/views/slots.py, ui/views/kv.py)
TIMELINE, QUEUE = ".st-key-{lab}-tl-{run}", ".st-key-{lab}-q-{run}"
LABS = {"static-vs-continuous": ("fixed-batch-holes", (TIMELINE, QUEUE)),
        "paged-kv": ("contiguous-vs-paged", (".st-key-{lab}-mem-{run}-pool", ".st-key-{lab}-mem-{run}-split",
                                             '[data-anim="{lab}.mem.{run}.tables"]', TIMELINE)),
        "policies": ("support-bot-sla", (TIMELINE, QUEUE))}


def settle(page) -> None:
    """Until the script has stopped and no element of an earlier run is left on the page (a rerun's stale
    copies stand beside the new ones until it ends), and the charts have drawn."""
    page.wait_for_function("""() => {
        const busy = document.querySelector('[data-testid="stStatusWidget"], [data-stale="true"]');
        window.__settled = busy ? 0 : (window.__settled || 0) + 1;
        return window.__settled >= 4;
    }""", polling=250, timeout=120_000)


def look_name(page_id: str, lang: str, instructor: bool, size) -> str:
    return f"{page_id}-{lang}{'-instructor' if instructor else ''}-{size[0]}x{size[1]}"


def check_text(page, where: str) -> list[str]:
    """The text problems of this look, and its screenshot."""
    page.screenshot(path=str(ARTIFACTS / f"layout-{where}.png"))
    return [f"{where}: {p}" for p in problems(text_layout(page))]


def at_size(page, size) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    time.sleep(1)  # the charts that fit the window redraw on resize
    settle(page)


def to_top(page) -> None:
    """The page scrolled to its top, as it is when ▶ is pressed."""
    page.evaluate("""() => { for (const el of [document.scrollingElement,
                       document.querySelector('[data-testid="stMain"]')]) if (el) el.scrollTop = 0; }""")


def open_at(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("h1", timeout=60_000)
    settle(page)


def view_boxes(page, lab: str, runs: list[str], views) -> dict[str, list]:
    """Per run, the box of each named view of its column, in order (None: the view is not drawn)."""
    out = {}
    for run in runs:
        out[run] = []
        for view in views:
            selector = view.format(lab=lab, run=run)
            boxes = page.evaluate(BOXES, f'[data-testid="stMain"] {selector}')
            out[run].append((selector, boxes[0] if boxes else None))
    return out


def check_playing_picture(page, lab: str, views, size, where: str) -> list[str]:
    """Every named view of every run lies inside the window, and the runs' views line up across columns."""
    found = []
    headings = page.evaluate(BOXES, '[data-testid="stMain"] .lab-run-heading')
    runs = [re.sub(r"^.*-tl-", "", c) for c in page.evaluate(
        """(lab) => [...document.querySelectorAll('[data-testid="stMain"] [class*="st-key-' + lab + '-tl-"]')]
                    .map(el => [...el.classList].find(c => c.startsWith('st-key-' + lab + '-tl-')))""", lab)]
    if not runs:
        return [f"{where}: no run's timeline on the page"]
    width, height = size
    boxes = view_boxes(page, lab, runs, views)
    for named in boxes.values():
        for name, box in named:
            if box is None:
                found.append(f"{where}: {name} is not drawn")
            elif box["y"] < -1 or box["bottom"] > height + 1 or box["x"] < -1 or box["right"] > width + 1:
                found.append(f"{where}: {name} at y {box['y']:.0f}..{box['bottom']:.0f}, x {box['x']:.0f}.."
                             f"{box['right']:.0f} is not inside the {width}x{height} window")
    # side by side: the same view of each run starts at the same height, and so do the headings
    for i, view in enumerate(views):
        tops = {run: named[i][1]["y"] for run, named in boxes.items() if named[i][1]}
        if tops and max(tops.values()) - min(tops.values()) > 4:
            found.append(f"{where}: the runs' {view.format(lab=lab, run='*')} do not line up: tops {tops}")
    tops = [h["y"] for h in headings]
    if tops and max(tops) - min(tops) > 4:
        found.append(f"{where}: the run headings do not line up: tops {tops}")
    return found + [f"{where}: {readable(p)}" for p in page.evaluate(OVERFLOWING_COLUMNS)]
