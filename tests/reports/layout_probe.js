// Injected by browser_check.sh into a copy of architecture.html (the page itself has no script): checks that no
// element sticks out of the window and no SVG element out of its drawing, then writes the verdict into the DOM.
(function () {
  var W = document.documentElement.clientWidth, bad = [], n = 0;
  var all = document.body.getElementsByTagName("*");
  for (var i = 0; i < all.length; i++) {
    var e = all[i], r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    n++;
    var name = e.tagName.toLowerCase() + (e.textContent ? ' "' + e.textContent.slice(0, 40) + '"' : "");
    if (r.left < -0.5 || r.right > W + 0.5)
      bad.push(name + " spans " + Math.round(r.left) + ".." + Math.round(r.right) + " of " + W);
    var svg = e.ownerSVGElement;
    if (svg) {
      var s = svg.getBoundingClientRect();
      if (r.left < s.left - 1 || r.right > s.right + 1 || r.top < s.top - 1 || r.bottom > s.bottom + 1)
        bad.push(name + " leaves its drawing");
    }
  }
  if (document.documentElement.scrollWidth > W)
    bad.push("page " + document.documentElement.scrollWidth + " px wide in a " + W + " px window");
  var p = document.createElement("pre");
  p.id = "layout-verdict";
  p.textContent = bad.length ? "LAYOUT OVERFLOW: " + bad.slice(0, 8).join("; ")
                             : "LAYOUT OK: " + n + " elements inside " + W + " px; page height " +
                                   document.documentElement.scrollHeight;
  document.body.appendChild(p);
})();
