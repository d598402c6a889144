// The search of a static copy of the web inbox (`watcher site`): no server, so the search page
// loads search-index.js (window.WATCHER_INDEX: one entry per paper of the archive) and shows
// the papers whose text holds every plain word of ?q=. Every other page works without script.
(function () {
  "use strict";
  var index = window.WATCHER_INDEX || [];
  var params = new URLSearchParams(window.location.search);
  var results = document.getElementById("results");
  if (!results) return;

  // The query language (OR, AND, NOT, "phrases", parentheses, -word, field:, word*) is read by
  // `watcher serve` only: a query using it is answered with a sentence, never with a guess.
  // Its operators come from the page (watcher.query.OPERATORS); the rest is the look of a token.
  var operators = (results.getAttribute("data-operators") || "").split(" ").filter(Boolean);

  function usesSyntax(query) {
    if (/["()]/.test(query)) return true;
    return query.split(/\s+/).some(function (w) {
      return operators.indexOf(w) >= 0 || w.charAt(0) === "-" || /^\w*:/.test(w) ||
        (w.length > 1 && w.charAt(w.length - 1) === "*");
    });
  }

  // Plain words: each must appear, in any case, in the title, authors, abstract or TL;DR.
  function holds(p, word) {
    return (p.title + " " + p.authors.join(" ") + " " + p.abstract + " " + p.tldr)
      .toLowerCase().indexOf(word) >= 0;
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text) e.textContent = text;
    return e;
  }

  var q = (params.get("q") || "").trim();
  var from = params.get("from") || "", to = params.get("to") || "";
  var cat = (params.get("cat") || "").trim().toLowerCase();
  ["q", "from", "to", "cat"].forEach(function (name) {  // the form shows what was asked
    var input = document.querySelector('form.search [name="' + name + '"]');
    if (input && params.get(name)) input.value = params.get(name);
  });
  if (!q && !from && !to && !cat) return;
  results.textContent = "";
  if (usesSyntax(q)) {
    var note = el("p", "meta", "This static copy searches plain words only (every word must appear in a " +
      "paper's title, authors, abstract or TL;DR). The query language (OR, AND, NOT, \"phrases\", " +
      "parentheses, -word, ti: au: cat: and the other fields, word*) needs the server: run watcher serve.");
    note.setAttribute("role", "status");
    results.appendChild(note);
    return;
  }
  var wanted = q.toLowerCase().split(/\s+/).filter(Boolean);
  var found = index.filter(function (p) {
    if (from && p.day < from) return false;
    if (to && p.day > to) return false;
    if (cat && !p.categories.some(function (c) { return c.toLowerCase() === cat || c.toLowerCase().indexOf(cat + ".") === 0; })) return false;
    return wanted.every(function (w) { return holds(p, w); });
  });
  found.sort(function (a, b) { return a.day < b.day ? 1 : a.day > b.day ? -1 : 0; });

  results.appendChild(el("p", "meta", found.length === 1 ? "1 paper matches" : found.length + " papers match"));
  found.forEach(function (p) {
    var card = el("article", "paper");
    var h = el("h3");
    var a = el("a", "", p.title);
    a.href = p.url;
    h.appendChild(a);
    card.appendChild(h);
    var names = p.authors.slice(0, 6).join(", ") + (p.authors.length > 6 ? " et al." : "");
    card.appendChild(el("p", "meta", [names, p.day, p.categories[0]].filter(Boolean).join(" · ")));
    if (p.tldr) {  // as the pages show it: the label in bold
      var tldr = el("p", "tldr");
      tldr.appendChild(el("strong", "", "TL;DR:"));
      tldr.appendChild(document.createTextNode(" " + p.tldr));
      card.appendChild(tldr);
    }
    results.appendChild(card);
  });
})();
