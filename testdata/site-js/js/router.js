// A small client-side router: the server sends the same shell for every view; the view
// named by ?view= is built from its JSON endpoint, and links inside the app change the
// view with history.pushState instead of loading a page.
const routes = {
  caravans: { title: "Caravans", url: "/api/caravans.json", key: "caravans",
              line: (c) => c.name + " (" + c.stops + " stops)" },
  guilds: { title: "Guilds", url: "/api/guilds.json", key: "guilds",
            line: (g) => g.name + ", founded " + g.founded },
};

async function show(name) {
  const route = routes[name] || routes.caravans;
  const view = document.getElementById("view");
  const answer = await fetch(route.url);
  const data = await answer.json();
  view.innerHTML = "";
  const h1 = document.createElement("h1");
  h1.textContent = route.title;
  view.appendChild(h1);
  const ul = document.createElement("ul");
  ul.className = "board " + route.key;
  for (const item of data[route.key]) {
    const li = document.createElement("li");
    li.className = "entry";
    li.dataset.id = item.id;
    li.textContent = route.line(item);
    ul.appendChild(li);
  }
  view.appendChild(ul);
  document.title = route.title + " | Emberfall Market";
}

document.addEventListener("click", (e) => {
  const a = e.target.closest("a[data-route]");
  if (!a) return;
  e.preventDefault();
  history.pushState({}, "", a.href);
  show(a.dataset.route);
});
window.addEventListener("popstate", () => show(new URLSearchParams(location.search).get("view")));
show(new URLSearchParams(location.search).get("view"));
