// ttt serve: the little JavaScript the pages use. Every page works without it (each key below
// follows a link that is on the page); it adds keys to walk through a game and the live
// progress of a running audit.
"use strict";

// ← and → step back and forward through the game, Home and End jump to its ends, u takes
// the last move back: each follows the page's link of that id.
const KEYS = { ArrowLeft: "back", ArrowRight: "forward", Home: "start", End: "end", u: "undo" };

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey) return;
  const target = event.target;
  if (target && ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)) return;
  const id = KEYS[event.key];
  const link = id && document.getElementById(id);
  if (link) {
    event.preventDefault();
    window.location.href = link.href;
  }
});

// The progress line, as the server writes it: "96 of 20,088 (0.5%), about 3 min left".
function duration(seconds) {
  seconds = Math.max(0, Math.ceil(seconds));
  if (seconds < 60) return `${seconds} s`;
  let minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  if (minutes < 60) return rest ? `${minutes} min ${rest} s` : `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  minutes %= 60;
  return minutes ? `${hours} h ${minutes} min` : `${hours} h`;
}

function progressText(done, total, seconds) {
  if (!total) return done ? `${done.toLocaleString("en-US")} done` : "starting";
  let text = `${done.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} ` +
    `(${(100 * done / total).toFixed(1)}%)`;
  if (done && done < total && seconds > 0) {
    text += `, about ${duration(seconds * (total - done) / done)} left`;
  }
  return text;
}

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
      if (text) text.textContent = progressText(job.done, job.total, job.seconds);
      window.setTimeout(() => pollAudit(box), 500);
    })
    .catch(() => window.setTimeout(() => pollAudit(box), 2000));
}

document.addEventListener("DOMContentLoaded", () => {
  const box = document.getElementById("audit");
  if (box && box.dataset.status === "running") pollAudit(box);
});
