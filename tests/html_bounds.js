<script>
/* tests/html.sh: added to a copy of a page shown in an iframe of a given
 * width; it writes into the parent page the page's height and each text
 * drawn outside its figure or element outside the page (but inside a
 * scrolling box: wide tables scroll). */
window.addEventListener('load', function () {
  var de = document.documentElement, out = [], w = window.innerWidth;
  out.push('HEIGHT ' + de.scrollHeight);
  out.push('WIDTH ' + de.scrollWidth + ' of ' + w);
  document.querySelectorAll('svg').forEach(function (s) {
    var sb = s.getBoundingClientRect();
    s.querySelectorAll('text').forEach(function (t) {
      var b = t.getBoundingClientRect();
      if (b.left < sb.left - 1 || b.right > sb.right + 1 || b.top < sb.top - 1 ||
          b.bottom > sb.bottom + 1)
        out.push('CLIPPED ' + t.textContent.slice(0, 60));
    });
  });
  document.querySelectorAll('body *').forEach(function (e) {
    var b = e.getBoundingClientRect(), p;
    if (!(b.width > 0) || (b.right <= w + 1 && b.left >= -1))
      return;
    for (p = e.parentElement; p; p = p.parentElement) {
      var x = getComputedStyle(p).overflowX;
      if (x === 'auto' || x === 'scroll')
        return;
    }
    out.push('OUTSIDE ' + e.tagName + ' ' + Math.round(b.left) + '..' + Math.round(b.right));
  });
  var pre = parent.document.createElement('pre');
  pre.id = 'bounds';
  pre.textContent = out.join('\n');
  parent.document.body.appendChild(pre);
});
</script>
