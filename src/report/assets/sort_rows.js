document.querySelectorAll('#rows th[data-col]').forEach(function (th) {
  var col = Number(th.dataset.col);
  th.style.cursor = 'pointer';
  th.addEventListener('click', function () {
    var body = document.getElementById('rows').tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var down = th.dataset.down !== '1';
    th.dataset.down = down ? '1' : '0';
    var key = function (row) { var t = row.cells[col].textContent; var n = parseFloat(t); return isNaN(n) ? t : n; };
    rows.sort(function (a, b) { var x = key(a), y = key(b); var c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === 'number' ? -1 : 1); return down ? c : -c; });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
