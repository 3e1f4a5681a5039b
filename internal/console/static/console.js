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
  // After an htmx navigation, move focus to the new main content so screen
  // readers and keyboard users start there.
  document.addEventListener("htmx:afterSettle", function (e) {
    if (e.detail && e.detail.boosted) { var m = document.getElementById("main"); if (m) m.focus({ preventScroll: true }); }
  });
})();
