export class CorruptFile extends Error {}
