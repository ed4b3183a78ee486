/** Static pages for failures: no render, no stack, nothing that could fail in turn. */
const page = (title: string, text: string) =>
  Buffer.from(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
      `<meta name="viewport" content="width=device-width, initial-scale=1"></head>` +
      `<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem">` +
      `<h1>${title}</h1><p>${text}</p></body></html>`,
  );

export const SERVER_ERROR_PAGE = page('Something went wrong', 'The page could not be shown. Please try again.');
export const OVERLOADED_PAGE = page('Busy right now', 'Too many people are here at once. Please try again in a moment.');
