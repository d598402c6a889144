// The search of a static copy of the web inbox (`watcher site`): no server, so the search page
// loads search-index.js (window.WATCHER_INDEX: one entry per paper of the archive) and shows
// the papers whose text holds every word of ?q=. Every other page works without script.
(function () {
  "use strict";
  var index = window.WATCHER_INDEX || [];
  var params = new URLSearchParams(window.location.search);
  var results = document.getElementById("results");
  if (!results) return;

  function fold(text) {
    return (text || "").normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .replace(/[-\u2010-\u2015]/g, " ");
  }

  // "phrases", words, field:word, -word / NOT word, word*
  function terms(query) {
    var out = [], re = /(-|NOT\s+)?(?:(ti|abs|au|cat):)?(?:"([^"]*)"|(\S+))/g, m;
    while ((m = re.exec(query)) !== null) {
      var text = m[3] !== undefined ? m[3] : m[4];
      if (!m[3] && (text === "AND" || text === "OR")) continue;
      var prefix = text.length > 1 && text.charAt(text.length - 1) === "*";
      text = fold(prefix ? text.slice(0, -1) : text).trim();
      if (text) out.push({ not: !!m[1], field: m[2] || "", text: text, prefix: prefix });
    }
    return out;
  }

  function fieldText(p, field) {
    if (field === "ti") return p.title;
    if (field === "abs") return p.abstract;
    if (field === "au") return p.authors.join(" ");
    if (field === "cat") return p.categories.join(" ");
    return p.title + " " + p.authors.join(" ") + " " + p.abstract + " " + p.tldr;
  }

  function holds(p, t) {
    var hay = " " + fold(fieldText(p, t.field)).replace(/[^\w.]+/g, " ") + " ";
    var needle = " " + t.text.replace(/[^\w.]+/g, " ") + (t.prefix ? "" : " ");
    return hay.indexOf(needle) >= 0;
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
  var wanted = terms(q);
  var found = index.filter(function (p) {
    if (from && p.day < from) return false;
    if (to && p.day > to) return false;
    if (cat && !p.categories.some(function (c) { return c.toLowerCase() === cat || c.toLowerCase().indexOf(cat + ".") === 0; })) return false;
    return wanted.every(function (t) { return holds(p, t) !== t.not; });
  });
  found.sort(function (a, b) { return a.day < b.day ? 1 : a.day > b.day ? -1 : 0; });

  results.textContent = "";
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
