// Fills the market's product list from the JSON endpoint: the server sends an empty list.
// Each product links to its page, so the links exist only in the rendered DOM.
(async () => {
  const list = document.querySelector("ul.products");
  const status = document.querySelector("p.status");
  const answer = await fetch("/api/products.json");
  if (!answer.ok) {
    status.textContent = "The stalls are closed (HTTP " + answer.status + ").";
    console.error("products: HTTP " + answer.status);
    return;
  }
  const { products } = await answer.json();
  for (const p of products) {
    const li = document.createElement("li");
    li.className = "product";
    li.dataset.id = p.id;
    li.innerHTML = '<a class="name"></a> <span class="price"></span> <span class="rarity"></span>';
    li.querySelector(".name").href = "/market/product.html?id=" + p.id;
    li.querySelector(".name").textContent = p.name;
    li.querySelector(".price").textContent = p.price;
    li.querySelector(".rarity").textContent = p.rarity;
    list.appendChild(li);
  }
  status.textContent = products.length + " stalls open.";
})();
