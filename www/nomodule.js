// Runs only in browsers without ES modules (<script nomodule>): the
// calculator cannot start there, so say so instead of loading forever.
(function () {
  var main = document.querySelector("#app main, #widget main, #bench-page main");
  if (!main) return;
  var box = document.createElement("div");
  box.className = "notice notice-error";
  var strong = document.createElement("strong");
  strong.textContent = "This browser is too old for the calculator. ";
  box.appendChild(strong);
  box.appendChild(document.createTextNode("Use a current version of Firefox, Chrome, Edge or Safari."));
  while (main.firstChild) main.removeChild(main.firstChild);
  main.appendChild(box);
})();
