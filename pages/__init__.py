"""One thin file per page (st.navigation runs each as a script): read session state, call ui/ and engine, draw.
Nothing imports this package; it is a package only so that the import linter sees the pages."""
