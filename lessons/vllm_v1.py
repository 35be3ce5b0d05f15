"""The "How vLLM v1 does it" boxes (lessons/vllm_v1.yaml): for a lesson whose mechanism vLLM v1 implements
differently from the lab, what vLLM v1 does today, where the lab differs and why, and the files to read in
vLLM. The lesson page shows the box under the lesson's text."""
from __future__ import annotations

from dataclasses import dataclass

import yaml

from lessons.loader import LANGS, ROOT, _kept_while_unchanged, _lang, _need

PATH = ROOT / "vllm_v1.yaml"


@dataclass(frozen=True)
class VllmBox:
    lesson: str
    text: str  # in the asked language
    read: tuple[str, ...]  # files in vLLM's repository


@_kept_while_unchanged(lambda lang: [PATH])
def load_vllm_boxes(lang: str) -> dict[str, VllmBox]:
    """Lesson id -> its box, in `lang`."""
    lang = _lang(lang)
    data = yaml.load(PATH.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    _need(isinstance(data, list), PATH, "top level", "must be a list of boxes")
    out = {}
    for i, d in enumerate(data):
        entry = f"box #{i + 1}"
        _need(isinstance(d, dict) and isinstance(d.get("lesson"), str), PATH, entry, "needs a lesson id")
        _need(all(isinstance(d.get(k), str) and d[k].strip() for k in LANGS), PATH, entry, "needs zh and en text")
        read = d.get("read") or []
        _need(read and all(isinstance(f, str) and f.startswith("vllm/") for f in read), PATH, entry,
              "read must list files in vLLM's repository (vllm/...)")
        _need(d["lesson"] not in out, PATH, entry, f"a second box for {d['lesson']}")
        out[d["lesson"]] = VllmBox(d["lesson"], d[lang], tuple(read))
    return out
