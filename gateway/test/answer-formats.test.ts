import { csvField, csvLine } from "../src/http/csv";
import { negotiated } from "../src/http/negotiation";
import { HttpError } from "../src/http/errors";

const offers = ["application/json", "text/csv"];

describe("Accept negotiation (RFC 9110 12.5.1)", () => {
  it.each([
    [undefined, "application/json"],
    ["", "application/json"],
    ["*/*", "application/json"],
    ["text/csv", "text/csv"],
    ["TEXT/CSV; charset=utf-8", "text/csv"],
    ["text/*", "text/csv"],
    ["application/json, text/csv", "application/json"],
    ["text/csv, application/json;q=0.9", "text/csv"],
    ["application/json;q=0.5, text/csv;q=0.9", "text/csv"],
    ["text/csv;q=0, */*", "application/json"],
    ["text/html, */*;q=0.1", "application/json"],
    [["text/html", "text/csv;q=0.2"], "text/csv"],
  ])("Accept %j answers %s", (accept, expected) => {
    expect(negotiated(accept as string | string[] | undefined, offers)).toBe(expected);
  });

  it.each(["application/xml", "text/html, application/*;q=0", "text/csv;q=0, application/json;q=0", "*/*;q=0", "application/json;q=2"])("Accept %j is a 406 naming Accept", (accept) => {
    const refused = (() => {
      try {
        negotiated(accept, offers);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(HttpError);
    expect(refused).toMatchObject({ statusCode: 406, details: [{ path: "Accept" }] });
  });
});

describe("CSV fields (RFC 4180)", () => {
  it("quotes a field with a comma, a quote, CR or LF (quotes doubled); null and undefined are empty; numbers as written", () => {
    expect(["plain", "a,b", 'say "hi"', "two\nlines", "cr\rhere", "", null, undefined, 12.5, -3n].map(csvField)).toEqual([
      "plain",
      '"a,b"',
      '"say ""hi"""',
      '"two\nlines"',
      '"cr\rhere"',
      "",
      "",
      "",
      "12.5",
      "-3",
    ]);
    expect(csvLine(["SS26", null, 'x"y'])).toBe('SS26,,"x""y"\r\n');
  });

  it("shows text a spreadsheet would run as a formula as text (a leading apostrophe); numbers stay numbers", () => {
    expect(["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx", '=HYPERLINK("http://x","y")', "a=b", -3.5, -3n].map(csvField)).toEqual([
      "'=1+1",
      "'+SUM(A1)",
      "'-2+3",
      "'@cmd",
      "'\tx",
      '"\'\rx"',
      '"\'=HYPERLINK(""http://x"",""y"")"',
      "a=b",
      "-3.5",
      "-3",
    ]);
  });
});
