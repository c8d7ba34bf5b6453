/**
 * `extract=standard`: the canonical real-estate schema, mapped from a role's native fields at
 * preparation time by a multilingual label lexicon and the schema.org keys, and stored in the recipe.
 * A role is a real-estate listing when it maps a price and either bedrooms or an area; a name that
 * could be any product's (`size`) counts as an area only beside rooms.
 */
import type { FieldRecipe, Parsed, RoleRecipe } from './recipe';

const LEXICON: Array<{ canonical: string; names: RegExp; types?: ReadonlyArray<FieldRecipe['type']> }> = [
  {
    canonical: 'listing_price',
    names: /(^|_|\.)(price|asking_price|rent|prix|loyer|precio|alquiler|preis|kaufpreis|miete|kaltmiete|warmmiete|mietpreis|prezzo|affitto|canone|preco|aluguel|prijs|vraagprijs|huurprijs|huur)($|_)/,
    types: ['price', 'int', 'decimal'],
  },
  // Whole words only: a `bed_size` or `bedding` is a product's, not a count of bedrooms.
  { canonical: 'bedrooms', names: /(^|_|\.)(beds?|bedrooms?|bdrms?|chambres?|habitacion(es)?|dormitorios?|schlafzimmer|camere(_da_letto)?|quartos|slaapkamers?)($|_|\.)/, types: ['int', 'decimal'] },
  { canonical: 'bathrooms', names: /(bath|salle_de_bain|salles_de_bain|bano|badezimmer|bagni|banheiro|badkamers?)/, types: ['int', 'decimal'] },
  { canonical: 'area', names: /(area|surface|superficie|wohnflache|flache|sq_?ft|m2|metros|oppervlakte)/, types: ['int', 'decimal'] },
  { canonical: 'year_built', names: /(year_built|built|baujahr|ano_de_construccion|annee)/, types: ['int'] },
  { canonical: 'property_type', names: /(property_type|type|typ|tipo)$/ },
  { canonical: 'address', names: /(address|adresse|direccion|ubicacion|indirizzo|location|street_address)/ },
  { canonical: 'title', names: /^(title|name|headline)$/ },
];

/**
 * Names that mean an area only among rooms: a shop's `size` (shoe sizes) or a car's `living` is not a
 * floor area, so alone beside a price they make no listing.
 */
const AREA_AMONG_ROOMS = /(^|_)(size|living)($|_)/;
const AREA_TYPES: ReadonlyArray<FieldRecipe['type']> = ['int', 'decimal'];

/** Canonical field → native field of the role, or undefined when the role is not a real-estate listing. */
export function standardMapping(fields: readonly FieldRecipe[]): Record<string, string> | undefined {
  const map: Record<string, string> = {};
  for (const entry of LEXICON) {
    const field = fields.find(
      (candidate) => entry.names.test(candidate.name) && (!entry.types || entry.types.includes(candidate.type)) && !Object.values(map).includes(candidate.name),
    );
    if (field) map[entry.canonical] = field.name;
  }
  if (!map.area && (map.bedrooms || map.bathrooms)) {
    const field = fields.find((candidate) => AREA_AMONG_ROOMS.test(candidate.name) && AREA_TYPES.includes(candidate.type) && !Object.values(map).includes(candidate.name));
    if (field) map.area = field.name;
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
