// One product's page: the server sends the same shell for every ?id=; the name, price and
// rarity come from the JSON endpoint.
(async () => {
  const id = Number(new URLSearchParams(location.search).get("id"));
  const answer = await fetch("/api/products.json");
  const { products } = await answer.json();
  const p = products.find((x) => x.id === id);
  const main = document.querySelector("main.product");
  if (!p) {
    main.querySelector("h1").textContent = "No such stall";
    return;
  }
  main.querySelector("h1").textContent = p.name;
  main.querySelector(".price").textContent = p.price;
  main.querySelector(".rarity").textContent = p.rarity;
  document.title = p.name + " | Emberfall Market";
})();
