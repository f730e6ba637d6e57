// Names people read for the variants and Turbo's charging rules. The English here is the
// fallback for a name the catalogue lacks; pages show t("variant.<name>") and friends.

import { t } from "./i18n.js";

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

/** "turbo-blind" (a stored game's variant) -> "Turbo Hearts (blind)", in this page's language. */
export function variantLabel(name) {
  if (!name) return "";
  if (VARIANT_LABEL[name]) return t(`variant.${name}`, {}, VARIANT_LABEL[name]);
  const dealt = /^(.+)-(\d+)deals$/.exec(name); // a tournament's variant cut to n deals
  if (dealt) return t("variant.with_deals", { variant: variantLabel(dealt[1]), count: Number(dealt[2]) });
  if (name.startsWith("turbo-")) {
    const rules = name.slice(6).replace("-", "_");
    const label = t(`rules.${rules}`, {}, name.slice(6).replace("-", " "));
    return t("variant.turbo_with", { rules: label });
  }
  return name;
}

/** A variant's description from /api/variants, in this page's language: the catalogue's
 * variant.<name>.description, else the server's English. */
export function variantDescription(info) {
  return t(`variant.${info.name}.description`, {}, info.description || "");
}
