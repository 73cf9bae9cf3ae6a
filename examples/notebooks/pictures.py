"""The pictures of docs/notebooks.md: each example notebook executed, rendered to HTML by
nbconvert, opened in headless Chromium, and its outputs photographed at desktop and phone
width.

Run from the repository's root, with the notebook and test extras and Chromium with its driver
(/usr/bin/chromium, /usr/bin/chromedriver; nothing is downloaded):

    python examples/notebooks/pictures.py docs/img

The notebooks run in a temporary folder (they solve 3x3 and 4x4 k=4 there).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

HERE = Path(__file__).resolve().parent
WIDTHS = {"desktop": 1100, "phone": 390}
SHOTS = [
    # notebook, the cell whose output is photographed (its source starts so), picture, widths
    ("01-grade-your-agent", "report = ttt.audit(", "notebook-audit", ("desktop", "phone")),
    ("02-why-does-this-move-lose", "ttt.analyse(before)", "notebook-analysis", ("desktop",)),
    ("02-why-does-this-move-lose", "line", "notebook-game", ("desktop", "phone")),
    ("03-strength-curve", "curves = ttt.curve(", "notebook-curve", ("desktop",)),
    ("04-the-book-in-pandas", "counts = (", "notebook-pandas", ("desktop",)),
]


def rendered(name: str, folder: Path) -> Path:
    """The notebook executed in ``folder`` and rendered there as HTML."""
    notebook = nbformat.read(HERE / f"{name}.ipynb", as_version=4)
    NotebookClient(notebook, timeout=600, resources={"metadata": {"path": str(folder)}}).execute()
    for index, cell in enumerate(notebook.cells):  # an anchor for each cell's output
        cell.metadata["tags"] = [*cell.metadata.get("tags", []), f"cell-{index}"]
    html, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    page = folder / f"{name}.html"
    page.write_text(html, encoding="utf-8")
    return page


def browser(width: int) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"):
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},3200")
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(service=Service(executable_path=driver_path), options=options)


def main(target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ttt-notebooks-") as work:
        pages = {name: rendered(name, Path(work)) for name in {shot[0] for shot in SHOTS}}
        for size, width in WIDTHS.items():
            driver = browser(width)
            try:
                for name, start, picture, sizes in SHOTS:
                    if size not in sizes:
                        continue
                    driver.get(pages[name].as_uri())
                    cells = driver.find_elements(By.CSS_SELECTOR, ".jp-Cell")
                    sources = nbformat.read(HERE / f"{name}.ipynb", as_version=4).cells
                    index = next(i for i, c in enumerate(sources) if c.source.startswith(start))
                    output = cells[index].find_element(By.CSS_SELECTOR, ".jp-Cell-outputWrapper")
                    driver.execute_script("arguments[0].scrollIntoView();", output)
                    path = target / f"{picture}-{size}.png"
                    output.screenshot(str(path))
                    print(path)
            finally:
                driver.quit()


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img"))
