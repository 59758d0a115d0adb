// Arbiter's only script besides htmx. It marks that JavaScript runs, so buttons needed only
// without it (inline edits save on change with htmx) can be hidden.
document.documentElement.classList.add("js");

// Live regions (class "live") refresh themselves by htmx polling. A refresh waits while the
// person is at work in one — a control has focus, a row is selected for a bulk change, a
// refused change's sentence is shown — and while the tab is hidden.
document.addEventListener("htmx:beforeRequest", function (e) {
  var elt = e.detail.elt;
  if (!elt.classList || !elt.classList.contains("live")) {
    return;
  }
  var busy = document.hidden ||
    (elt !== document.activeElement && elt.contains(document.activeElement)) ||
    elt.querySelector("input[type=checkbox]:checked, .status .err") !== null;
  if (busy) {
    e.preventDefault();
  }
});
