// Runs first: collects script errors, failed loads and policy violations
// into the page (#mirotrace-errors), so a headless browser's DOM dump shows them.
(function () {
  "use strict";
  var errors = [];
  var root = document.documentElement;
  root.className += " js";
  root.setAttribute("data-errors", "0");
  function show() {
    var box = document.getElementById("mirotrace-errors");
    if (box && errors.length) {
      box.textContent = errors.join("\n");
      box.hidden = false;
    }
  }
  function report(message) {
    errors.push(String(message));
    root.setAttribute("data-errors", String(errors.length));
    show();
  }
  window.mirotraceReport = report;
  window.addEventListener("error", function (e) {
    var where = e.filename ? " at " + e.filename + ":" + e.lineno : "";
    var what = e.message || ("failed to load " + ((e.target && (e.target.src || e.target.href)) || e.type));
    report("error: " + what + where);
  }, true);
  window.addEventListener("unhandledrejection", function (e) {
    report("unhandled rejection: " + e.reason);
  });
  document.addEventListener("securitypolicyviolation", function (e) {
    report("blocked by the page's policy: " + e.violatedDirective + " " + (e.blockedURI || ""));
  });
  ["error", "warn"].forEach(function (level) {
    var original = console[level];
    console[level] = function () {
      report("console." + level + ": " + Array.prototype.join.call(arguments, " "));
      return original.apply(console, arguments);
    };
  });
  document.addEventListener("DOMContentLoaded", show);
})();
