/**
 * The console's stylesheet, served by the service at `/ops/console/console.css` (no CDN, no build
 * step): a readable table-and-form layout that fits 1280 px and a tablet (the navigation wraps,
 * wide tables scroll inside their box). Colours keep WCAG AA contrast (axe-core checks it).
 */
export const consoleStylesheet = `
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: #1a1a1a; background: #f6f7f9; }
a { color: #0a5a8c; }
code { font-size: .85em; word-break: break-all; }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; padding: .6rem 1.5rem; background: #123047; color: #fff; }
.top a { color: #fff; }
.brand { margin: 0; font-weight: 700; }
.brand a { text-decoration: none; }
nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0; padding: 0; }
nav a[aria-current=page] { font-weight: 700; text-decoration: underline; text-underline-offset: .3em; }
.who { margin-left: auto; display: flex; align-items: center; gap: .8rem; font-size: .9rem; }
.who form { margin: 0; }
main { max-width: 78rem; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.6rem; margin: .8rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .6rem; }
.scroll { overflow-x: auto; background: #fff; border: 1px solid #d5d9de; border-radius: .4rem; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; padding: .5rem .75rem; font-weight: 600; }
th, td { text-align: left; vertical-align: top; padding: .45rem .75rem; border-top: 1px solid #e3e6ea; }
th { background: #eef1f4; font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
form.inline { display: inline-flex; flex-wrap: wrap; align-items: end; gap: .4rem; margin: 0 .4rem .4rem 0; }
.field { display: flex; flex-direction: column; gap: .2rem; margin: 0 0 .6rem; }
.field.row { flex-direction: row; align-items: center; }
label { font-size: .9rem; font-weight: 600; }
input[type=text], input[type=email], input[type=password], input[type=number], input[type=date], select, textarea { font: inherit; padding: .45rem .55rem; border: 1px solid #8a939c; border-radius: .3rem; background: #fff; min-width: 0; max-width: 100%; }
textarea { width: 100%; min-height: 3rem; }
button { font: inherit; padding: .5rem 1rem; border: 0; border-radius: .3rem; background: #0b6e4f; color: #fff; cursor: pointer; }
button.danger { background: #a32020; }
button.secondary { background: #4a5561; }
button.link { background: none; padding: 0; color: #fff; text-decoration: underline; }
.notice { padding: .75rem 1rem; border-radius: .4rem; margin: 0 0 1rem; border: 1px solid; }
.notice.ok { background: #e6f4ea; border-color: #8cc79f; }
.notice.error { background: #fdecea; border-color: #e39a94; }
.notice.info { background: #fff4e5; border-color: #e8c48f; }
.notice p { margin: .2rem 0; }
.muted { color: #4d5660; font-size: .9rem; }
.empty { padding: 1rem; background: #fff; border: 1px dashed #b9c0c7; border-radius: .4rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(18rem, 1fr)); gap: 1rem; }
.card { background: #fff; border: 1px solid #d5d9de; border-radius: .4rem; padding: .8rem 1rem; }
.card h2, .card h3 { margin-top: 0; }
.document { margin: 0 0 .6rem; }
.document img { max-width: 100%; max-height: 28rem; display: block; border: 1px solid #d5d9de; }
.document iframe { width: 100%; height: 28rem; border: 1px solid #d5d9de; background: #fff; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0 0 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
.pager { margin: 1rem 0; }
.signin { max-width: 28rem; margin: 3rem auto; background: #fff; border: 1px solid #d5d9de; border-radius: .4rem; padding: 1rem 1.5rem; }
.signin input { width: 100%; }
@media (max-width: 900px) {
  .top { padding: .6rem 1rem; }
  .who { margin-left: 0; width: 100%; }
  main { padding: .5rem 1rem 2rem; }
  dl.facts { grid-template-columns: 1fr; }
}
`;
