// Insika Studio: line numbers for the record editor, kept in step with the text and its scroll.
(function () {
  "use strict";
  function setup(box) {
    var area = box.querySelector("textarea");
    var gutter = box.querySelector(".gutter");
    if (!area || !gutter) return;
    var errorLine = parseInt(box.getAttribute("data-error-line") || "0", 10);
    var shown = -1;
    function number() {
      var count = area.value.split("\n").length;
      if (area.value.endsWith("\n") && count > 1) count -= 1;
      if (count === shown) return;
      shown = count;
      var out = [];
      for (var i = 1; i <= count; i++) {
        out.push(i === errorLine ? '<span class="err">' + i + "</span>" : "<span>" + i + "</span>");
      }
      gutter.innerHTML = out.join("");
      gutter.scrollTop = area.scrollTop;
    }
    area.addEventListener("input", number);
    area.addEventListener("scroll", function () { gutter.scrollTop = area.scrollTop; });
    number();
    if (errorLine > 0 && !area.readOnly) {  // put the caret on the line named by the error
      var lines = area.value.split("\n");
      var start = 0;
      for (var j = 0; j < errorLine - 1 && j < lines.length; j++) start += lines[j].length + 1;
      area.focus();
      area.setSelectionRange(start, start + (lines[errorLine - 1] || "").length);
      area.scrollTop = Math.max(0, (errorLine - 5) * 20);
    }
  }
  document.querySelectorAll(".editor").forEach(setup);
})();
