// ttt serve: the little JavaScript the pages use. Every page works without it; it adds
// a keyboard shortcut for undo and the live progress of a running audit.
"use strict";

document.addEventListener("keydown", (event) => {
  if (event.key === "u" && !event.ctrlKey && !event.metaKey && !event.altKey) {
    const target = event.target;
    if (target && ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)) return;
    const undo = document.getElementById("undo");
    if (undo) window.location.href = undo.href;
  }
});

function pollAudit(box) {
  const bar = document.getElementById("progress");
  const text = document.getElementById("progress-text");
  fetch(box.dataset.poll, { headers: { Accept: "application/json" } })
    .then((response) => response.json())
    .then((job) => {
      if (job.status !== "running") {
        window.location.reload();
        return;
      }
      if (bar && job.total) {
        bar.max = job.total;
        bar.value = job.done;
      }
      if (text) text.textContent = `${job.done} of ${job.total || "?"}`;
      window.setTimeout(() => pollAudit(box), 500);
    })
    .catch(() => window.setTimeout(() => pollAudit(box), 2000));
}

document.addEventListener("DOMContentLoaded", () => {
  const box = document.getElementById("audit");
  if (box && box.dataset.status === "running") pollAudit(box);
});
