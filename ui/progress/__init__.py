"""A student's saved progress: `saved` keeps quiz answers, worksheet drafts and gradings, predictions and
milestones in the classroom store under the student's `?s=` token and restores them into the session; `panel`
is the Home page's progress panel (name, class code, export, import, start over); `keys` names the session keys
progress owns."""
