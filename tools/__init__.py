"""QA tools run by hand and by the tests, outside the lab's runtime packages (nothing in the lab imports them)."""
