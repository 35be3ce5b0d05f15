"""Start the lab: `python -m ui.serve [streamlit options]` runs `streamlit run app.py` in this process.

Streamlit treats a `pages/` folder beside the entry script as an old-style multipage app until the
first script run calls st.navigation; a deep link (/paged-kv) opened first on a fresh server would
then run that page file on its own, without app.py's navigation and sidebar. Our pages/ folder
holds st.navigation pages, so that old mode is switched off before the server starts.
"""
import sys
from pathlib import Path

from streamlit.runtime.pages_manager import PagesManager
from streamlit.web import cli

APP = Path(__file__).resolve().parent.parent / "app.py"


def main() -> None:
    PagesManager.uses_pages_directory = False
    sys.argv = ["streamlit", "run", str(APP), *sys.argv[1:]]
    sys.exit(cli.main())


if __name__ == "__main__":
    main()
