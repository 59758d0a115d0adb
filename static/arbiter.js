// Arbiter's only script besides htmx: marks that JavaScript runs, so buttons needed only
// without it (inline edits save on change with htmx) can be hidden.
document.documentElement.classList.add("js");
