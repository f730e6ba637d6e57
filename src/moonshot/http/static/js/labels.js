// Names people read for the variants and Turbo's charging rules.

export const VARIANT_LABEL = {
  turbo: "Turbo Hearts",
  standard: "Standard",
  omnibus: "Omnibus",
  trend: "Trend",
  kierki: "Kierki",
  sessions: "Sessions",
};

/** [value the API takes, label] for Turbo's charging rules. */
export const CHARGING_RULES = [
  ["classic", "classic"],
  ["blind", "blind"],
  ["bridge", "bridge"],
  ["chain", "chain"],
  ["blind_bridge", "blind bridge"],
  ["blind_chain", "blind chain"],
];

/** "turbo-blind" (a stored game's variant) -> "Turbo Hearts (blind)". */
export function variantLabel(name) {
  if (!name) return "";
  if (VARIANT_LABEL[name]) return VARIANT_LABEL[name];
  if (name.startsWith("turbo-")) return `Turbo Hearts (${name.slice(6).replace("-", " ")})`;
  return name;
}
