/** Stylesheets imported by a chunk (uPlot's): Vite emits them as files. */
declare module "*.css"
