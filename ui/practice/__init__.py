"""The practice pages' pieces: `quiz` (one question's answer widget, its run for a numeric question, the
result and the score by topic) and `worksheets` (fields whose text outlives the widgets, the batching
comparison beside what the engine measured, a check's feedback). The attempt and the answers themselves
live in ui/progress/."""
