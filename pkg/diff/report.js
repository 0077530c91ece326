(function () {
  var op = "", kind = "";
  function refresh() {
    document.querySelectorAll("details.object").forEach(function (o) {
      o.hidden = (op !== "" && o.dataset.op !== op) || (kind !== "" && o.dataset.kind !== kind);
    });
    document.querySelectorAll("[data-filter-op]").forEach(function (b) {
      b.classList.toggle("active", b.dataset.filterOp === op);
    });
    document.querySelectorAll("[data-filter-kind]").forEach(function (b) {
      b.classList.toggle("active", b.dataset.filterKind === kind);
    });
  }
  document.addEventListener("click", function (e) {
    var b = e.target.closest("button");
    if (!b) { return; }
    if (b.dataset.filterOp !== undefined) { op = b.dataset.filterOp; }
    if (b.dataset.filterKind !== undefined) { kind = b.dataset.filterKind; }
    refresh();
  });
})();
