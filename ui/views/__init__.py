"""The drawn views of one run at one frame, as the lab pages compose them: `slots` (slot timeline, queue,
side-by-side columns), `kv` (block pool, memory split, block tables, refusals), `results` (live metrics, the
summary table, saving runs), `base` (what they share: chart configs, colours, labels, headings). `lesson` draws
a lesson page from lessons/<lang>/*.md."""
