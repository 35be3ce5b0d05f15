"""Instructor: one class's quiz answers, worksheet criteria, predictions and live poll, behind the passcode."""
from ui.instructor import class_view

class_view.render()
