/**
 * `extract=standard`: the canonical real-estate schema, mapped from a role's native fields at
 * preparation time by a multilingual label lexicon and the schema.org keys, and stored in the recipe.
 * A role is a real-estate listing when it maps a price and either bedrooms or an area.
 */
import type { FieldRecipe, Parsed, RoleRecipe } from './recipe';

const LEXICON: Array<{ canonical: string; names: RegExp; types?: ReadonlyArray<FieldRecipe['type']> }> = [
  { canonical: 'listing_price', names: /(^|_|\.)(price|asking_price|prix|precio|preis|kaufpreis|miete|rent|prezzo|preco)($|_)/, types: ['price', 'int', 'decimal'] },
  { canonical: 'bedrooms', names: /(bed|chambre|habitacion|dormitor|schlafzimmer|camere|quartos)/, types: ['int', 'decimal'] },
  { canonical: 'bathrooms', names: /(bath|salle_de_bain|salles_de_bain|bano|badezimmer|bagni|banheiro)/, types: ['int', 'decimal'] },
  { canonical: 'area', names: /(area|surface|superficie|wohnflache|flache|sq_?ft|size|m2|living)/, types: ['int', 'decimal'] },
  { canonical: 'year_built', names: /(year_built|built|baujahr|ano_de_construccion|annee)/, types: ['int'] },
  { canonical: 'property_type', names: /(property_type|type|typ|tipo)$/ },
  { canonical: 'address', names: /(address|adresse|direccion|ubicacion|indirizzo|location|street_address)/ },
  { canonical: 'title', names: /^(title|name|headline)$/ },
];

/** Canonical field → native field of the role, or undefined when the role is not a real-estate listing. */
export function standardMapping(fields: readonly FieldRecipe[]): Record<string, string> | undefined {
  const map: Record<string, string> = {};
  for (const entry of LEXICON) {
    const field = fields.find(
      (candidate) => entry.names.test(candidate.name) && (!entry.types || entry.types.includes(candidate.type)) && !Object.values(map).includes(candidate.name),
    );
    if (field) map[entry.canonical] = field.name;
  }
  return map.listing_price && (map.bedrooms || map.area) ? map : undefined;
}

/** The canonical object of a page (of each record, on a list page), from its native values. */
export function toStandard(role: Pick<RoleRecipe, 'standard'>, applied: { values: ReadonlyMap<string, unknown>; items?: ReadonlyArray<ReadonlyMap<string, unknown>> }): Parsed | undefined {
  const map = role.standard;
  if (!map) return undefined;
  const one = (values: ReadonlyMap<string, unknown>): Parsed => {
    const out: Parsed = {};
    for (const [canonical, native] of Object.entries(map)) {
      const value = values.get(native);
      if (value !== undefined) out[canonical] = value;
    }
    return out;
  };
  return applied.items ? { items: applied.items.map(one) } : one(applied.values);
}

export const STANDARD_FIELDS = LEXICON.map((entry) => entry.canonical);
