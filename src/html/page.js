// Conveniences only: the page reads the same without this script.
// Sortable tables, filter boxes, opening a trace's timeline from the
// address (#trace-N), every timeline open for printing, and a self-check
// of the charts that headless tests read back from the DOM.
(function () {
  "use strict";
  var report = window.mirotraceReport || function () {};

  function cellValue(cell) {
    var v = cell.getAttribute("data-v");
    if (v !== null) return parseFloat(v);
    var text = cell.textContent.trim();
    var n = parseFloat(text.replace(/[,%]/g, ""));
    return isNaN(n) || !/^[-+]?[\d.,]+%?$/.test(text) ? text.toLowerCase() : n;
  }

  function sortBy(table, th, index) {
    var body = table.tBodies[0];
    if (!body) return;
    var descending = th.getAttribute("aria-sort") !== "descending";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[index] ? cellValue(a.cells[index]) : "";
      var y = b.cells[index] ? cellValue(b.cells[index]) : "";
      var order = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
      return descending ? -order : order;
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    rows.forEach(function (r) { body.appendChild(r); });
  }

  document.querySelectorAll("table.sortable").forEach(function (table) {
    if (!table.tHead || !table.tHead.rows.length) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      th.setAttribute("data-sortable", "");
      th.tabIndex = 0;
      th.title = "sort";
      th.addEventListener("click", function () { sortBy(table, th, index); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, th, index); }
      });
    });
  });

  document.querySelectorAll("input.filter").forEach(function (input) {
    var target = document.getElementById(input.getAttribute("data-for"));
    if (!target) return;
    var items = target.tagName === "TABLE" ? target.tBodies[0].rows : target.children;
    input.addEventListener("input", function () {
      var needle = input.value.trim().toLowerCase();
      Array.prototype.forEach.call(items, function (item) {
        item.hidden = needle !== "" && item.textContent.toLowerCase().indexOf(needle) < 0;
      });
    });
  });

  function openFromHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    var el = document.getElementById(id);
    for (var node = el; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    if (el) el.scrollIntoView();
  }
  window.addEventListener("hashchange", openFromHash);
  openFromHash();

  var closedForPrint = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details:not([open])").forEach(function (d) {
      d.open = true;
      closedForPrint.push(d);
    });
  });
  window.addEventListener("afterprint", function () {
    closedForPrint.forEach(function (d) { d.open = false; });
    closedForPrint = [];
  });

  // Self-check: the figures parse, and every chart has marks and a size.
  var status = document.getElementById("mirotrace-status");
  try {
    var island = document.getElementById("mirotrace-data");
    var data = JSON.parse(island.textContent);
    if (!data || typeof data !== "object") report("the embedded figures are not an object");
  } catch (e) {
    report("the embedded figures do not parse: " + e);
  }
  var charts = document.querySelectorAll("svg.chart");
  var empty = [];
  charts.forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    var marks = svg.querySelectorAll(".mark").length;
    if (!marks || box.width < 1 || box.height < 1) empty.push(svg.getAttribute("data-chart"));
  });
  if (status) {
    status.setAttribute("data-charts", String(charts.length));
    status.setAttribute("data-empty-charts", empty.join(" "));
    status.setAttribute("data-ready", "yes");
  }
})();
