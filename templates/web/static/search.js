// The search of a static copy of the web inbox (`watcher site`): no server, so the search page
// loads search-index.js (window.WATCHER_INDEX: one entry per paper of the archive) and shows
// the papers whose text holds every plain word of ?q=. Every other page works without script.
(function () {
  "use strict";
  var index = window.WATCHER_INDEX || [];
  var params = new URLSearchParams(window.location.search);
  var results = document.getElementById("results");
  if (!results) return;

  // The query language (OR, AND, NOT, "phrases", parentheses, field:, word*) is read by
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

  // Plain words, read as the server reads them (watcher.util.text.words): case, accents and
  // apostrophes folded, split at every other character, simple plurals made singular (the
  // words that only look plural come from the page, watcher.util.text.NOT_PLURAL). A paper holds a
  // word where the matcher's own words of its title, abstract or authors (p.words, shipped in
  // the index) hold it whole: "RL" is not a part of "world". A word that folds into several
  // ("fine-tuning") is a phrase, as on the server.
  var notPlural = {};
  (results.getAttribute("data-not-plural") || "").split(" ").forEach(function (w) { notPlural[w] = true; });

  function stem(w) {
    if (w.length <= 3 || w.charAt(w.length - 1) !== "s" || notPlural[w]) return w;
    if (/ies$/.test(w) && w.length > 4) return w.slice(0, -3) + "y";
    if (/(ss|us|is)$/.test(w)) return w;
    return w.slice(0, -1);
  }

  function words(text) {
    var folded = text.normalize("NFKD").replace(/\p{M}/gu, "").replace(/[\u2019']/g, "").toLowerCase();
    return (folded.match(/[a-z0-9]+/g) || []).map(stem);
  }

  function holds(p, phrase) {
    var wanted = " " + phrase.join(" ") + " ";
    return p.words.some(function (field) { return (" " + field + " ").indexOf(wanted) >= 0; });
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
      "paper's title, abstract or authors). The query language (OR, AND, NOT, \"phrases\", " +
      "parentheses, ti: au: cat: and the other fields, word*) needs the server: run watcher serve.");
    note.setAttribute("role", "status");
    results.appendChild(note);
    return;
  }
  if (from && to && from > to) {  // as the server's search says it (watcher/web/search.py)
    var wrong = el("p", "error", "from: " + from + " is after to: " + to + " (no day is in between)");
    wrong.setAttribute("role", "alert");
    results.appendChild(wrong);
    return;
  }
  var wanted = q.split(/\s+/).map(words).filter(function (phrase) { return phrase.length; });
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
