"""Small views as plain HTML: the queue at the door and the block tables. A few dozen coloured
cells redraw far cheaper as HTML than as a chart, which matters at 10 frames/s. Hovering a cell
shows its details (the title attribute)."""
from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from viz.blocks import block_code
from viz.palette import FREE, HUES, JOURNEY_COLORS, MARK, contrast_with_white, request_color, tint

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.core.snapshot import StepSnapshot


CELL = "display:inline-block;width:{w}px;height:{h}px;margin:1px;border-radius:2px;vertical-align:middle;"


def _cell(color: str, title: str, text: str = "", outline: bool = False, size: tuple[int, int] = (14, 14),
          ink: str = "#000") -> str:
    w, h = size
    border = f"box-shadow:0 0 0 2px {MARK};" if outline else ""
    style = (CELL.format(w=w, h=h)
             + f"background:{color};{border}font-size:10px;line-height:{h}px;text-align:center;color:{ink}")
    return f'<span title="{escape(title)}" style="{style}">{escape(text)}</span>'


def _block_background(code: int) -> str:
    """A block table cell in the block pool's look (viz/blocks.py STAMPS): solid when full, its upper half pale
    when partly filled, an outline when reserved but empty."""
    if code < 2:
        return FREE
    hue, level = divmod(code - 2, 3)
    h = HUES[hue % len(HUES)]
    if level == 1:
        return f"linear-gradient(to bottom,{tint(h, 0.6)} 50%,{h} 50%)"
    if level == 2:
        return f"{tint(h, 0.85)};box-shadow:inset 0 0 0 2px {h}"
    return h


def _ink(code: int) -> str:
    """The block number's colour: white on a full block of a dark hue, else black (4.5:1 either way)."""
    if code < 2 or (code - 2) % 3:
        return "#000"
    return "#fff" if contrast_with_white(HUES[(code - 2) // 3 % len(HUES)]) >= 4.5 else "#000"


def class_legend_html(names: dict[str, str], hues: dict[str, int], note: str = "") -> str:
    """Which colour is which request class (names: class -> its name shown; hues: class -> hue index), each as a
    decode swatch beside its prefill tint, on one line that wraps; `note` after it."""
    items = "".join(
        '<span style="white-space:nowrap;margin-right:0.9em">'
        + "".join(f'<span style="display:inline-block;width:0.8em;height:0.9em;background:{color};'
                  f'outline:1px solid #555;margin-right:1px"></span>'
                  for color in (request_color(hues[c]), request_color(hues[c], prefill=True)))
        + f' {escape(name)}</span> ' for c, name in names.items())
    note = f'<span style="color:#555">· {escape(note)}</span>' if note else ""
    return f'<div class="lab-class-legend" style="font-size:0.85rem;line-height:1.6">{items}{note}</div>'


def queue_html(snap: StepSnapshot, color_of: dict[str, int], labels: dict, capacity: int = 48) -> str:
    """The queue at the door, in admission order; the head is outlined when something blocks it, and every cell
    says why its request waits (the scheduler's Wait, with its figures). At most `capacity` cells are drawn, the
    rest counted in words after them: with that note, three lines of the column."""
    cells = []
    for rid in snap.waiting[:capacity]:
        view = snap.requests.get(rid)
        why, wait = snap.blocked.get(rid), snap.waits.get(rid)
        title = f"{rid} · {view.request_class} · {labels['prompt']} {view.num_prompt_tokens} · " \
                f"{labels['waiting_since']} {view.arrival_step}" if view else rid
        if wait:
            title += f" · {labels['blocked']}: " + labels.get(f"wait.{wait.code}", wait.code).format(
                have=wait.have, need=wait.need, behind=wait.behind)
        elif why:  # a recording made before waits were kept names the head's reason alone
            title += f" · {labels['blocked']}: {labels.get('why_' + why, why)}"
        cells.append(_cell(request_color(color_of.get(rid, 0)), title, outline=bool(why)))
    more = len(snap.waiting) - capacity
    if more > 0:  # only the first `capacity` are drawn; how many more wait is said in words on the cells' last line
        note = escape(labels.get("queue_more", "+{n}").format(n=more))
        cells.append(f'<span style="display:inline-block;height:14px;margin:1px 0 1px 4px;font-size:11px;'
                     f'line-height:14px;vertical-align:middle;white-space:nowrap">{note}</span>')
    head = f"<b>{escape(labels['waiting'])}: {len(snap.waiting)}</b>"
    # as tall as a full queue (`capacity` cells and the note in three lines of its column: 16 px each, whatever the
    # type size) at every step: the views below it and the chart fitted above it keep their place while the queue
    # fills and empties; the head is one short line, so it never wraps
    return (f'<div style="white-space:nowrap">{head}</div>'
            f'<div style="line-height:0;min-height:{3 * (14 + 2)}px">{"".join(cells)}</div>')


def block_tables_html(snap: StepSnapshot, request_ids: list[str], color_of: dict[str, int], labels: dict,
                      max_blocks: int) -> str:
    """Per request one row: its logical blocks in order, each labelled with the physical block holding it."""
    shades = {}
    rows = []
    for rid in request_ids:
        table = snap.block_tables.get(rid)
        if table is None:
            continue
        cells = []
        for i, b in enumerate(table[:max_blocks]):
            code = block_code(rid, snap.block_fill[b], snap.block_ref_count[b], False, snap.block_size, color_of)
            if code not in shades:
                shades[code] = _block_background(code)
            title = (f"{rid} · {labels['logical']} {i} → {labels['physical']} {b} · "
                     f"{snap.block_fill[b]}/{snap.block_size}")
            cells.append(_cell(shades[code], title, str(b), size=(24, 18), ink=_ink(code)))
        label = f'<code style="display:inline-block;min-width:6.5em;font-size:0.75rem">{escape(rid)}</code>'
        rows.append(f'<div style="white-space:nowrap">{label}{"".join(cells)}</div>')
    return "".join(rows) or "—"


def journey_html(stages, first: int, last: int, now: int | None, title_of, label: str) -> str:
    """One request's journey as a strip on the run's step axis (`first` to `last`): a segment per stage in its
    state's colour (waiting hatched; a pre-emption and the finish drawn as marks a step wide at least), a title per
    segment (`title_of(stage)`), and the step `now` marked with a line. `label` names the strip for screen readers;
    the stages are in words in the table beside it."""
    span = max(1, last - first + 1)
    parts = []
    for s in stages:
        left, width = 100 * (s.first - first) / span, max(0.4, 100 * (s.last - s.first + 1) / span)
        color = JOURNEY_COLORS[s.state]
        fill = (f"repeating-linear-gradient(45deg,{color} 0 4px,#b8b8c0 4px 5px)" if s.state == "waiting"
                else color)
        parts.append(f'<span title="{escape(title_of(s))}" style="position:absolute;left:{left:.3f}%;'
                     f'width:{width:.3f}%;top:0;bottom:0;background:{fill}"></span>')
    if now is not None and first <= now <= last:
        parts.append(f'<span style="position:absolute;left:{100 * (now - first + 0.5) / span:.3f}%;top:-3px;'
                     f'bottom:-3px;width:2px;background:{MARK};box-shadow:0 0 0 1px #fff"></span>')
    return (f'<div role="img" aria-label="{escape(label)}" style="position:relative;height:22px;margin:6px 0 2px;'
            f'background:{FREE};border-radius:3px">{"".join(parts)}</div>')
