"""What the instructor drives: lecture `moments` (a page preset, a narration line, a prediction to ask first),
the `class_view` (a class's answers summed), live `poll`s, the instructor `passcode`, and `access` (who is
unlocked as the instructor, and the classroom store they reach)."""
