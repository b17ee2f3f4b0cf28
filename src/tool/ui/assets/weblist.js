// weblist.js — a click on a source line with instructions shows or hides
// them (the .asm span right after the line's .livesrc span).
function weblistToggle(event) {
  let el = event.target;
  while (el && !(el.classList && el.classList.contains('livesrc'))) el = el.parentElement;
  if (!el) return;
  const asm = el.nextElementSibling;
  if (asm && asm.classList.contains('asm')) asm.classList.toggle('open');
}
document.addEventListener('DOMContentLoaded', () => {
  for (const pre of document.querySelectorAll('pre.weblist')) pre.addEventListener('click', weblistToggle);
});
