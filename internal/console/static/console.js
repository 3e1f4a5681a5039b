// Samsa console: keyboard navigation. "g" then a section's letter goes
// there (the letters are the nav links' data-key); "/" focuses the page's
// search field (any input with data-search); "?" shows the keys. Every
// page works without this script: it only adds shortcuts.
(function () {
  "use strict";
  var pendingG = false, timer = null;
  function typing(el) {
    if (!el) return false;
    var tag = el.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
  }
  function showHelp() {
    var old = document.getElementById("key-help");
    if (old) { old.remove(); return; }
    var d = document.createElement("div");
    d.id = "key-help"; d.className = "help-dialog"; d.setAttribute("role", "dialog"); d.setAttribute("aria-label", "Keyboard shortcuts");
    var h = document.createElement("h2"); h.textContent = "Keyboard shortcuts"; d.appendChild(h);
    var ul = document.createElement("ul");
    document.querySelectorAll("header.top nav a[data-key]").forEach(function (a) {
      var li = document.createElement("li"); li.textContent = "g " + a.getAttribute("data-key") + " — " + a.textContent; ul.appendChild(li);
    });
    ["/ — search this page", "? — show or hide this help", "Esc — close"].forEach(function (t) { var li = document.createElement("li"); li.textContent = t; ul.appendChild(li); });
    d.appendChild(ul);
    document.body.appendChild(d);
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    if (e.key === "Escape") { var h = document.getElementById("key-help"); if (h) h.remove(); return; }
    if (pendingG) {
      pendingG = false; clearTimeout(timer);
      var a = document.querySelector('header.top nav a[data-key="' + e.key + '"]');
      if (a) { e.preventDefault(); a.click(); }
      return;
    }
    if (e.key === "g") { pendingG = true; timer = setTimeout(function () { pendingG = false; }, 1500); return; }
    if (e.key === "/") { var s = document.querySelector("[data-search]"); if (s) { e.preventDefault(); s.focus(); } return; }
    if (e.key === "?") { e.preventDefault(); showHelp(); }
  });
  // A table too wide (or tall) for the screen scrolls inside its
  // .table-wrap; keyboard users can scroll it only if it takes focus, so
  // such a wrapper becomes a named, focusable region (axe-core's
  // scrollable-region-focusable), and stops being one when it fits.
  function scrollables() {
    document.querySelectorAll(".table-wrap").forEach(function (w) {
      if (w.scrollWidth > w.clientWidth + 1 || w.scrollHeight > w.clientHeight + 1) {
        if (w.getAttribute("tabindex") === null) {
          // Remember what was added, to take only that away.
          var added = ["tabindex"];
          w.setAttribute("tabindex", "0");
          if (!w.hasAttribute("role")) { w.setAttribute("role", "region"); added.push("role"); }
          if (!w.hasAttribute("aria-label")) {
            var cap = w.querySelector("caption");
            w.setAttribute("aria-label", (cap && cap.textContent.trim()) || "Table (scrolls)");
            added.push("aria-label");
          }
          w.setAttribute("data-scrollable", added.join(" "));
        }
      } else if (w.hasAttribute("data-scrollable")) {
        w.getAttribute("data-scrollable").split(" ").forEach(function (a) { w.removeAttribute(a); });
        w.removeAttribute("data-scrollable");
      }
    });
  }
  // Content swapped in (htmx, server-sent events) is looked at before
  // anything else runs: a mutation observer's callback runs right after
  // the change.
  function watch() {
    scrollables();
    new MutationObserver(scrollables).observe(document.body, { childList: true, subtree: true });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch); else watch();
  window.addEventListener("resize", scrollables);
  // After an htmx navigation, move focus to the new main content so screen
  // readers and keyboard users start there.
  document.addEventListener("htmx:afterSettle", function (e) {
    if (e.detail && e.detail.boosted) { var m = document.getElementById("main"); if (m) m.focus({ preventScroll: true }); }
  });
})();
