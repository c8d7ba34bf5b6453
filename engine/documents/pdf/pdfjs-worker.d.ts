/** pdf.js ships no types for its worker half; it is only handed to pdf.js itself. */
declare module 'pdfjs-dist/legacy/build/pdf.worker.mjs' {
  export const WorkerMessageHandler: unknown;
}
