(function () {
  "use strict";
  // Sorting and view switching only: the tables are rendered on the server, and no string
  // from the data is ever turned into markup here (no innerHTML).
  var protocol = document.getElementById("protocol");
  var contrast = document.getElementById("contrast");
  var sections = Array.prototype.slice.call(document.querySelectorAll("section.view"));
  var empty = document.getElementById("no-view");
  if (!protocol || !contrast || !empty) { return; }  // a page without entries has no views

  function show() {
    var shown = null;
    sections.forEach(function (section) {
      var on = section.getAttribute("data-protocol") === protocol.value &&
        section.getAttribute("data-contrast") === contrast.value;
      section.hidden = !on;
      if (on) { shown = section; }
    });
    empty.hidden = shown !== null;
    return shown;
  }

  // Each view has a URL fragment (its section's id): opening the page with it shows that view, and
  // choosing a view puts its fragment in the address bar, so the view can be linked.
  function fromFragment() {
    var id = window.location.hash.slice(1);
    if (!id) { return false; }
    try { id = decodeURIComponent(id); } catch (e) { return false; }
    var section = document.getElementById(id);
    if (!section || sections.indexOf(section) < 0) { return false; }
    protocol.value = section.getAttribute("data-protocol");
    contrast.value = section.getAttribute("data-contrast");
    show();
    return true;
  }

  function choose() {
    var section = show();
    if (section && window.location.hash !== "#" + section.id) {
      try { window.history.replaceState(null, "", "#" + section.id); }
      catch (e) { window.location.hash = section.id; }  // some file:// pages refuse replaceState
    }
  }

  function sortKey(row, column) {
    var value = row.cells[column].getAttribute("data-value");
    return value === null || value === "" ? null : value;
  }

  function verifiedFirst(row) {
    return row.getAttribute("data-status") === "verified" ? 0 : 1;
  }

  function sortBy(button) {
    var header = button.parentNode;
    var table = header.closest("table");
    var scope = table.closest("section") || table;  // a table split into parts: the parts sort together
    var column = Number(button.getAttribute("data-col"));
    var numeric = button.getAttribute("data-kind") === "num";
    var state = header.getAttribute("aria-sort");
    var descending;
    if (state === "ascending") { descending = true; }
    else if (state === "descending") { descending = false; }
    else { descending = button.getAttribute("data-hib") === "true"; }  // first click: best first
    Array.prototype.forEach.call(scope.querySelectorAll("th[aria-sort]"), function (th) {
      th.setAttribute("aria-sort", "none");
    });
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var body = table.querySelector("tbody.ranked");  // reference rows (no edit) stay above, unranked
    if (!body) { return; }
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var tier = verifiedFirst(a) - verifiedFirst(b);  // verified entries stay above unverified ones
      if (tier !== 0) { return tier; }
      var x = sortKey(a, column);
      var y = sortKey(b, column);
      if (x === null || y === null) { return x === y ? 0 : (x === null ? 1 : -1); }  // missing values last
      var order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    var order = rows.map(function (row) { return row.getAttribute("data-id"); });
    Array.prototype.forEach.call(scope.querySelectorAll("table.board tbody.ranked"), function (other) {
      if (other === body) { return; }
      var byId = {};
      Array.prototype.forEach.call(other.rows, function (row) { byId[row.getAttribute("data-id")] = row; });
      order.forEach(function (id) { if (byId[id]) { other.appendChild(byId[id]); } });
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("button.sort"), function (button) {
    button.addEventListener("click", function () { sortBy(button); });
  });
  protocol.addEventListener("change", choose);
  contrast.addEventListener("change", choose);
  window.addEventListener("hashchange", fromFragment);
  if (!fromFragment()) { show(); }
}());
