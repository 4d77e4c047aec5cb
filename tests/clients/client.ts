// Ordinary client code on the types openapi-typescript generates from the served openapi.json
// (./api.d.ts, written beside this file by tests/serve/test_generated_clients.py). It must compile
// under `tsc --strict`; run, it prints what it read from every endpoint, for the test to compare.
import type { components, paths } from "./api";

type Schemas = components["schemas"];
type Content<P extends keyof paths> = paths[P]["get"]["responses"][200]["content"];
type JsonPath = { [P in keyof paths]: Content<P> extends { "application/json": unknown } ? P : never }[keyof paths];
type Json<P extends JsonPath> = Content<P> extends { "application/json": infer T } ? T : never;

declare const process: { argv: string[] };
const [base, authorization] = process.argv.slice(2);

async function get<P extends JsonPath>(path: string): Promise<Json<P>> {
  const answer = await fetch(base + path, { headers: { Authorization: authorization } });
  if (answer.status !== 200) throw new Error(`${path}: ${answer.status}`);
  return (await answer.json()) as Json<P>;
}

function readResult(result: Schemas["ModelResult"]) {
  const letter: Schemas["RatingLetter"] | undefined = result.ratingLetter;
  return { score: result.score, ratingLetter: letter ?? null, countryRank: result.countryRank ?? null };
}

async function main() {
  const models = await get<"/configuration/riskscoremodels/">("/configuration/riskscoremodels/");
  const countries = await get<"/configuration/countries/">("/configuration/countries/");
  const scores = await get<"/riskscores/{model}/">("/riskscores/sovereign/");
  const series = await get<"/riskscores/{model}/{country_code}/">("/riskscores/sovereign/AUT/");
  const country = await get<"/riskscores/country/{code}/">("/riskscores/country/AUT/");
  const root = await get<"/">("/");
  const release = await get<"/releases/current/">("/releases/current/");

  const section: Schemas["SectionResult"] = series.sections![0].results![0];
  const indicator: Schemas["IndicatorResult"] = series.indicators![0].results![0];
  const raw: (string | number | null)[] | null = indicator.data!.value;
  const read = {
    models: models.map((m) => m.code),
    countries: countries.map((c) => [c.code, c.name]),
    scores: readResult(scores.data[0].results[0]),
    series: readResult(series.results[0]),
    sectionWeight: section.weight ?? null,
    indicatorValue: raw === null ? null : raw[0],
    country: country.riskscores.map((s) => [s.model, s.score, s.riskClassificationCategorical ?? null]),
    root: { release: root.release.id, operations: root.endpoints.map((e) => e.operationId) },
    release: { id: release.id, vintages: release.models.map((m) => [m.code, m.dataVintage ?? null]) },
  };
  console.log(JSON.stringify(read));
}

main().catch((error: unknown) => {
  console.error(error);
  throw error;
});
